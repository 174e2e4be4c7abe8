module example.com/sleep

go 1.26
