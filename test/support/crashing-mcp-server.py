# A stdio MCP server that fails at start, as servers in the wild do: it writes a line of log output,
# then dies with a traceback whose last line quotes its (secret) configuration. Tests check that the
# traceback's last lines reach the error, with the secret redacted.
import os
import sys

print("starting the inventory server", file=sys.stderr)


def connect(url):
    raise ConnectionError("could not reach the database at " + url)


connect("postgres://app:" + os.environ.get("DB_PASSWORD", "") + "@db:5432/inventory")
