-- Fragment (included as {{OperatorActions.neverStarted}}): a condition on a transfers row that
-- never started (pending, or paused while pending, and nothing written for it): it has no
-- partial file or upload anywhere, so canceling it is final at once.
coalesce(paused_from, state) = 'pending' AND {{OperatorActions.nothingWritten}}
