package testenv

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
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

func readMoto(t testing.TB) motoData {
	t.Helper()
	res, err := http.Get(os.Getenv("AWS_ENDPOINT_URL") + "/moto-api/data.json")
	if err != nil {
		t.Fatalf("testenv: read moto data: %v", err)
	}
	defer res.Body.Close()
	var d motoData
	if err := json.NewDecoder(res.Body).Decode(&d); err != nil {
		t.Fatalf("testenv: decode moto data: %v", err)
	}
	return d
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
