-- How many transfers the dashboard's filter picks. $1–$4 as in FleetView.transferFilter.
SELECT count(*) AS n FROM transfers t WHERE {{FleetView.transferFilter}}
