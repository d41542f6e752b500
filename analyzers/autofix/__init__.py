"""AutoFix: fixes of Semgrep findings, verified by checks that do not trust the model."""
