package review

import "slices"

// Verdicts of a finished run or a review round (spec §2), best first.
const (
	Approve          = "APPROVE"
	ApproveWithNotes = "APPROVE_WITH_NOTES"
	RequestChanges   = "REQUEST_CHANGES"
	Block            = "BLOCK"
)

var verdicts = []string{Approve, ApproveWithNotes, RequestChanges, Block}

// Judge is the verdict one open finding calls for: BLOCK for a critical at
// or above the confidence threshold in the change, REQUEST_CHANGES for a
// blocking one, APPROVE_WITH_NOTES for any other (a pre-existing critical is
// a note: the change did not make it).
func Judge(severity string, confidence, threshold int, blocking, preExisting bool) string {
	switch {
	case severity == "critical" && confidence >= threshold && !preExisting:
		return Block
	case blocking:
		return RequestChanges
	default:
		return ApproveWithNotes
	}
}

// Worst returns the more severe of two verdicts.
func Worst(a, b string) string {
	if slices.Index(verdicts, b) > slices.Index(verdicts, a) {
		return b
	}
	return a
}
