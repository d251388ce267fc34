package review

// Verdicts of a finished run or a review round (spec §2).
const (
	Approve          = "APPROVE"
	ApproveWithNotes = "APPROVE_WITH_NOTES"
	RequestChanges   = "REQUEST_CHANGES"
	Block            = "BLOCK"
)
