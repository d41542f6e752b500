"""The LLM client: one client for every OpenAI-compatible endpoint, its answers, errors and
HTTP pools, the fan-out of its calls, and the embedded model."""
