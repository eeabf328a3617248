-- Fragment (included as {{TransferStore.uncleanedLocal}}): transfer $1 is a canceled get's whose
-- partial data in its local folder still waits to be removed.
id = $1 AND state = 'canceled' AND cleanup_pending AND options ? 'local_target' AND dest IS NOT NULL
