-- The hosts named $1 (a host key), or by its name $2 with or without a port: what an operator meant by a
-- host no transfer has come from (HostLimits.namesakes).
SELECT host FROM origin_hosts WHERE host IN ($1, $2) OR left(host, length($2) + 1) = $2 || ':' ORDER BY host LIMIT 6
