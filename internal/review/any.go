package review

// Schemas are the schemas of the agents' reports, in the order
// ValidateAny names them.
var Schemas = []string{SchemaReview, SchemaFix, SchemaValidation}

// Validated is what ValidateAny found in a valid report.
type Validated struct {
	Schema     string
	Summary    string   // what it holds: "3 findings, 1 fix check"
	Normalised []string // what was normalised on the way in
}

// ValidateAny validates a reviewer, fixer or validator report against the
// schema its "schema" field names. known is false when it names none of
// Schemas; the report's schema is then in v.Schema.
func ValidateAny(raw []byte, exp Expect) (v Validated, ps Problems, known bool) {
	v.Schema = SchemaOf(raw)
	switch v.Schema {
	case SchemaReview:
		var r Report
		r, ps = ValidateReview(raw, exp)
		v.Summary = Plural(len(r.Findings), "finding") + ", " + Plural(len(r.FixChecks), "fix check")
		v.Normalised = r.Normalised
	case SchemaFix:
		var r FixReport
		r, ps = ValidateFix(raw, exp)
		v.Summary, v.Normalised = Plural(len(r.Results), "result"), r.Normalised
	case SchemaValidation:
		var r ValidationReport
		r, ps = ValidateValidation(raw, exp)
		v.Summary, v.Normalised = Plural(len(r.Results), "result"), r.Normalised
	default:
		return v, nil, false
	}
	return v, ps, true
}
