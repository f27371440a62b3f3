"""Routed completions through an LLM gateway: listModels, routeCompletion, models/list, argument completion."""
