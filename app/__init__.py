"""hexmcp.app: the composition root. Commands, configuration and start-up: the one package that knows
every adapter and every tool pack and puts them together."""
