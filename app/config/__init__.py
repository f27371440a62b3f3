"""Settings: command-line flags, $HEXMCP_* variables and the TOML config file, in that order of precedence."""
