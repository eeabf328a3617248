-- One page of the dashboard's transfer table: the statuses the filter picks, in the order
-- asked. $1–$4 as in FleetView.transferFilter, $5 offset, $6 page size.
-- {{order}}: the ORDER BY (TransferOrder.sql), from a closed list of columns.
{{TransferStatus.select}}
WHERE {{FleetView.transferFilter}}
ORDER BY {{order}} OFFSET $5 LIMIT $6
