-- Fragment (included as {{TransferStore.uncleanedLocal}}): a transfer that is a canceled get's
-- whose partial data in its local folder still waits to be removed.
state = 'canceled' AND cleanup_pending AND options ? 'local_target' AND dest IS NOT NULL
