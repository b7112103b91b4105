"""The migration's inputs: the benchmark contract (eval.yaml plus the mapping file) and the source ledger
(leaderboard importers, Markdown tables as GitHub renders them, footnote qualifiers)."""
