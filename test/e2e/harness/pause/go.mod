module example.com/cnperf-e2e/pause

go 1.24.0
