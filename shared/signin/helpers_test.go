package signin_test

import (
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

func storeSetStatus(pk, sk string, s user.Status) *store.Write {
	return store.Set(pk, sk, "status", s)
}
