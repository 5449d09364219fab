"""`evalrun mutate`: how strong a suite is, measured by mutation testing.

Each case that passes on its recording is scored again, through the case runner's one scoring path, on mutants
of that conversation: plausible wrong behaviours of an agent, by family (ops_calls: tool calls; ops_args:
arguments by type, with values; ops_answer: the answer; ops_turns: the turns). A mutant that still passes
survives: the suite could not tell. Beside them: mutant and context (what the operators share), generate (a
case's mutants, seeded), rules, equivalent (changes the suite declares irrelevant), diagnose and locate (the
suite line that let a survivor through, and the fix), case_run (one case: read, score, mutate, cached), pool
(every core), outcome (the data), render (console, Markdown, HTML), session (the command as one call).
"""
