"""Execution oracles: verdicts of programs against test cases, pass@k and TCA@k, program repair."""
