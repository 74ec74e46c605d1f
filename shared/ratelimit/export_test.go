package ratelimit

// OnLostAnswer sets the hook called for each recognised lost answer.
func OnLostAnswer(f func()) { lostAnswer = f }
