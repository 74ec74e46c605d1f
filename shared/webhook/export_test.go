package webhook

import "github.com/gale-rmm/gale/shared/secret"

// Open unseals a stored webhook as the worker does (tests only).
func Open(box *secret.Box, r *record) (url string, sec []byte, headers []Header, err error) {
	h, err := openRecord(box, r)
	if err != nil {
		return "", nil, nil, err
	}
	return h.url, h.secret, h.headers, nil
}
