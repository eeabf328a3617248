-- Fragment (included as {{OperatorActions.newRun}}): the assignments that start a transfer's new
-- run (a retry, a resume, a haul get rerun adopting it) in an UPDATE transfers: its rate counts
-- from now, and only the bytes fetched from now on.
started_at = now(), run_base = (SELECT coalesce(sum(s.bytes_done), 0) FROM segments s WHERE s.transfer_id = transfers.id AND s.generation = transfers.generation)
