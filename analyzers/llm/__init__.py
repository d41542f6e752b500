"""The LLM client: one client for every OpenAI-compatible endpoint, its answers, errors and
HTTP pools, the fan-out of its calls, and the embedded model.

`openai` is imported in the functions that use it, not at the top of a module: its import was
0.4 s of CPU (1 s on a slow machine) in every process that imports the client, most of which
never make a request (`rtcbot --help`, a config check, the App's web process);
tests/analyzers/llm/test_lazy_openai.py keeps it so. An import in a function is thread-safe
(the import system locks the module while it runs) and, once made, costs a dictionary lookup.
"""
