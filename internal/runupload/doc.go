// Package runupload receives a profiling run sent from outside — the run
// directory 'perfscope profile' saves, as multipart/form-data parts or as a
// tar.gz — into a directory on disk, and checks that it is whole before
// anything reads it.
//
// It trusts nothing it is sent: names, counts and sizes (declared and
// inflated) are checked as the files stream in, before they reach the
// disk, and every profile is parsed through fetch's bounded reader. What
// it refuses for the sender's fault is an *InputError, over a limit or
// malformed, so that a server can answer 413 or 400; anything else is its
// own failure.
package runupload
