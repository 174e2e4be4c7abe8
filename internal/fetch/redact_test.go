package fetch

import "testing"

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:8080/v1/leftpad/?str=test&len=24&chr=*", "http://127.0.0.1:8080/v1/leftpad/?str=REDACTED&len=REDACTED&chr=REDACTED"},
		{"https://api.example.com/v1/items?api_key=s3cr3t", "https://api.example.com/v1/items?api_key=REDACTED"},
		{"http://user:pw@127.0.0.1:8080/?token=abc", "http://user:xxxxx@127.0.0.1:8080/?token=REDACTED"},
		{"http://user@127.0.0.1:8080/", "http://user@127.0.0.1:8080/"},
		{"http://127.0.0.1:6060/debug/pprof/profile", "http://127.0.0.1:6060/debug/pprof/profile"},
		// The names stay as written: a name with no value, an empty value.
		{"http://h/?debug&a=&b=1", "http://h/?debug&a=&b=REDACTED"},
		{"http://h/?", "http://h/?"},
		// A value holding "=" or an escaped "&" is one value.
		{"http://h/p?sig=a%26b=c&x=1", "http://h/p?sig=REDACTED&x=REDACTED"},
		{"http://h/cb#access_token=abc&state=1", "http://h/cb#REDACTED"},
		{"http://h/p?a=1#frag", "http://h/p?a=REDACTED#REDACTED"},
		{"http://h/p#", "http://h/p#"},
		// Not a URL url.Parse accepts: the query is still cut.
		{"http://h/%zz?key=v", "http://h/%zz?key=REDACTED"},
		{"-c", "-c"},
		{"", ""},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := RedactURL(tc.want); got != tc.want {
			t.Errorf("RedactURL of the redacted %q = %q: redacting twice changes it", tc.want, got)
		}
	}
}
