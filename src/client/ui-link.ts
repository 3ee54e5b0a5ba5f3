/**
 * Links into the Temporal Web UI. `configured` (the settings' MCP_TURNS_UI_URL) wins; otherwise a
 * local dev server's UI is assumed at gRPC port + 1000 (the dev server's default pairing, 7233 → 8233).
 */
export function uiBaseUrl(address: string, configured?: string): string {
  if (configured) return configured.replace(/\/$/, '');
  const match = /^(?:[a-z]+:\/\/)?([^:/]+):(\d+)$/.exec(address);
  const host = match?.[1] ?? 'localhost';
  const port = match?.[2] ? Number(match[2]) + 1000 : 8233;
  return `http://${host}:${port}`;
}

/** `uiBase` (e.g. the dev server's UI URL) wins over the guess from the gRPC address. */
export function workflowUrl(address: string, namespace: string, workflowId: string, uiBase?: string): string {
  const base = (uiBase ?? uiBaseUrl(address)).replace(/\/$/, '');
  return `${base}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
