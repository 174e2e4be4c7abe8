module example.com/seed

go 1.24
