"""GitHub's contract: its published OpenAPI description and webhook examples, and the tests
that hold the bot and the fake GitHub to them."""
