-- Spreads a transfer's segments over its mirrors (migration's haul_spread_mirrors). $1 transfer id, $2 generation.
SELECT haul_spread_mirrors($1, $2)
