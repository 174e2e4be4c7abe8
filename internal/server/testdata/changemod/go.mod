module example.com/changemod

go 1.24
