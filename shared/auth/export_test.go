package auth

// KeyPrefix exposes keyPrefix to the external tests.
const KeyPrefix = keyPrefix
