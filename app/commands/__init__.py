"""The commands other than serving: hexmcp audit, config check and the client commands (call, list, load, record, replay)."""
