"""SynthesisRTC: describe a code region, regenerate it, run the repository's tests."""
