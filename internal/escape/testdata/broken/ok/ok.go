package ok

// Box returns a pointer to a copy of v.
func Box(v int) *int { return &v } // want: moved-to-heap "`v` is moved to heap"
