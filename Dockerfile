# The mcp-turns worker image, for docker-compose.yml (scale with `--scale worker=N`).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN npm ci && npm prune --omit=dev
ENV NODE_ENV=production
# Connection and config come from the environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
# MCP_TURNS_CONFIG, ANTHROPIC_API_KEY, MCP_TURNS_TASK_QUEUE.
CMD ["node", "bin/mcp-turns.js", "worker"]
