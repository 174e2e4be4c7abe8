// Package libonly has no command.
package libonly

// Two returns 2.
func Two() int { return 2 }
