module example.com/libonly

go 1.26
