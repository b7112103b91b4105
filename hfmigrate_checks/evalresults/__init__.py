"""The ``.eval_results`` file every step reads or writes: the Hub's repos hold it, the ledger's dates
follow its rules, the drafts are written in it. Below the steps, so each imports it and none
imports another step for it."""
