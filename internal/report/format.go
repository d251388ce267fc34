package report

// A Format is one document a report renders as. Every format reads the one
// view of a finding, Finding; the SARIF and rdjson structs are only those
// formats' wire shapes.
type Format struct {
	Name   string // what `whetstone report --format` takes
	File   string // the file a finished run keeps it in; "" for none
	Render func(r *Report, version string) ([]byte, error)
}

// Formats are the report's formats, in the order the help lists them.
var Formats = []Format{
	{"md", "report.md", func(r *Report, _ string) ([]byte, error) { return []byte(r.Markdown()), nil }},
	{"json", "report.json", func(r *Report, _ string) ([]byte, error) { return r.JSON(), nil }},
	{"sarif", "report.sarif", (*Report).SARIF},
	{"rdjson", "", func(r *Report, _ string) ([]byte, error) { return r.RDJSON(), nil }},
}

// FormatNamed returns the format called name.
func FormatNamed(name string) (Format, bool) {
	for _, f := range Formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// FormatNames are the names of Formats, in their order.
func FormatNames() []string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.Name
	}
	return names
}
