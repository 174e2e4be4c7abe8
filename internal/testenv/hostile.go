package testenv

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"mime/multipart"
	"os"
	"testing"

	"github.com/google/pprof/profile"
)

// Hostile inputs: what an attacker, or a broken client, sends as a
// profile or a run. Each is built in milliseconds whatever its inflated
// size.

// gzipMembers returns a gzip stream that inflates to head then chunk
// repeated n times: one member compressed once and repeated (readers of
// gzip read every member).
func gzipMembers(head, chunk []byte, n int) []byte {
	member := func(data []byte) []byte {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		return buf.Bytes()
	}
	m := member(chunk)
	out := member(head)
	for range n {
		out = append(out, m...)
	}
	return out
}

// ZeroBomb is a gzip stream that inflates to mib MiB of zeros.
func ZeroBomb(mib int) []byte {
	return gzipMembers(nil, make([]byte, 1<<20), mib)
}

// RealShaped returns a profile that inflates to about mib MiB: the
// header of the real profile in the file at path (types, functions,
// locations, strings) followed by samples of 32-frame stacks over its
// locations, as a profile of a huge service would be.
func RealShaped(t testing.TB, path string, mib int) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	var head bytes.Buffer
	if err := p.WriteUncompressed(&head); err != nil {
		t.Fatal(err)
	}
	// One MiB of samples, encoded by hand as profile.proto's field 2.
	var chunk []byte
	varint := func(b []byte, v uint64) []byte {
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		return append(b, byte(v))
	}
	for i := 0; len(chunk) < 1<<20; i++ {
		var ids []byte
		for f := range 32 {
			ids = varint(ids, uint64(1+(i*7+f*13)%len(p.Location)))
		}
		var s []byte
		s = varint(append(s, 0x0a), uint64(len(ids)))
		s = append(s, ids...)
		s = append(s, 0x12, 2, 1, 10) // values 1 and 10
		chunk = varint(append(chunk, 0x12), uint64(len(s)))
		chunk = append(chunk, s...)
	}
	return gzipMembers(head.Bytes(), chunk, mib)
}

// RunJSON is the run.json of a run with one profile file per kind,
// <kind>.pb.gz.
func RunJSON(t testing.TB, id string, kinds ...string) []byte {
	t.Helper()
	type profileFile struct {
		Kind string `json:"kind"`
		File string `json:"file"`
	}
	saved := struct {
		ID       string        `json:"id"`
		Target   string        `json:"target"`
		Start    string        `json:"start"`
		Profiles []profileFile `json:"profiles"`
	}{ID: id, Target: "http://127.0.0.1:8080/", Start: "2025-03-01T12:00:00Z"}
	for _, k := range kinds {
		saved.Profiles = append(saved.Profiles, profileFile{k, k + ".pb.gz"})
	}
	data, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TarGz archives name/data pairs, as regular files.
func TarGz(files ...any) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for i := 0; i+1 < len(files); i += 2 {
		data := files[i+1].([]byte)
		tw.WriteHeader(&tar.Header{Name: files[i].(string), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))})
		tw.Write(data)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// Multipart encodes name/data pairs as form files; it returns the body's
// Content-Type and the body.
func Multipart(t testing.TB, files ...any) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		part, err := mw.CreateFormFile(files[i].(string), files[i].(string))
		if err != nil {
			t.Fatal(err)
		}
		part.Write(files[i+1].([]byte))
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}
