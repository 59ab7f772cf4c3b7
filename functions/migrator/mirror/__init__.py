"""The mirror: the stack itself runs the delta sweep of one source on a schedule until the cut-over (issue 45).

The same sweep as `migrator load --from P --since last` (migrator.sweeping), with the stack's own sink and
checkpoint: rows to the intake queue, the state in a control item of the ledger (`#mirror#<platform>`),
resumable across invocations, bounded by each invocation's time and by the source's budget.

- `decide`: what an invocation does and how it ended (pure, table-tested);
- `checkpoint`: the control item: its lease, the sweep's state, the mark record, the counts;
- `sink`: rows to intake, and a full sweep's stamps;
- `gone`: what is gone at the source, found by full sweeps and reported on the ledger, never acted on;
- `run`: one invocation; `handler`: the Lambda's entry (Handler: migrator.mirror.handler.handler).
"""
