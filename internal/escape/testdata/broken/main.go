package main

func main() {
	undefinedFn()
}
