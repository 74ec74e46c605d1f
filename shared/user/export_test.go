package user

// The membership writes, for the compare-and-swap tests of user_test.
var (
	ReplaceMembershipWrite = replaceMembershipWrite
	MemberChangeWrite      = memberChangeWrite
)
