"""What the three surfaces share: settings, the repository's config, selection and context,
the gate, budgets, qualification, logs and the check run's lifecycle."""
