package testenv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"
)

// Email is a message moto's SES recorded.
type Email struct {
	To      []string
	Subject string
	Body    string
}

// SMS is a text message moto's SNS recorded.
type SMS struct {
	Phone   string
	Message string
}

type motoData struct {
	SES struct {
		Message []struct {
			Body         string `json:"body"`
			Subject      string `json:"subject"`
			Destinations struct {
				ToAddresses []string `json:"ToAddresses"`
			} `json:"destinations"`
		} `json:"Message"`
	} `json:"ses"`
	SNS struct {
		SMS []struct {
			Message string `json:"message"`
			Phone   string `json:"phone_number"`
		} `json:"SMS"`
	} `json:"sns"`
}

// readMoto reads what moto recorded. moto serialises its state without a lock, so
// a dump taken while other tests write can fail (a 500 page); it is retried.
func readMoto(t testing.TB) motoData {
	t.Helper()
	var last error
	for attempt := 0; attempt < 10; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
		}
		d, err := fetchMoto()
		if err == nil {
			return d
		}
		last = err
	}
	t.Fatalf("testenv: read moto data: %v", last)
	return motoData{}
}

func fetchMoto() (motoData, error) {
	var d motoData
	res, err := http.Get(os.Getenv("AWS_ENDPOINT_URL") + "/moto-api/data.json?service=ses&service=sns")
	if err != nil {
		return d, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return d, fmt.Errorf("status %d", res.StatusCode)
	}
	if err := json.NewDecoder(res.Body).Decode(&d); err != nil {
		return d, fmt.Errorf("decode: %w", err)
	}
	return d, nil
}

// SentEmails returns what SES sent to address, oldest first. The emulator is
// shared by parallel packages, so tests use addresses of their own.
func SentEmails(t testing.TB, address string) []Email {
	t.Helper()
	var out []Email
	for _, m := range readMoto(t).SES.Message {
		for _, to := range m.Destinations.ToAddresses {
			if to == address {
				out = append(out, Email{To: m.Destinations.ToAddresses, Subject: m.Subject, Body: m.Body})
				break
			}
		}
	}
	return out
}

// SentSMS returns what SNS sent to phone, oldest first.
func SentSMS(t testing.TB, phone string) []SMS {
	t.Helper()
	var out []SMS
	for _, m := range readMoto(t).SNS.SMS {
		if m.Phone == phone {
			out = append(out, SMS{Phone: m.Phone, Message: m.Message})
		}
	}
	return out
}
