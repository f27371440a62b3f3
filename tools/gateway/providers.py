"""The kinds of LLM gateway the gateway pack speaks to: what `--provider-type` accepts."""

PROVIDER_TYPES = ("openai", "anthropic", "local")
