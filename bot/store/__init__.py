"""The App's database: deliveries and jobs, check runs and findings, feedback, budgets,
installations, qualifications and the LLM cache; one repository per aggregate
(bot/store/store.py `Store`)."""
