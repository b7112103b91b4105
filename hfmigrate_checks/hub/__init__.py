"""Everything asked of the Hugging Face Hub, read-only: the client and its one retry policy, which repo a
leaderboard label names (resolve) and what a repo already holds for a benchmark (state)."""
