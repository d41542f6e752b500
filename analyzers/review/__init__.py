"""Review: rtcbot as a reviewer whose comments are filtered by CRScore."""
