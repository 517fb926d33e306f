/**
 * Sentences for the detector evaluation (docs/detectors.md, "Evaluation on generated text"). `{}`
 * is where a generated value goes. Two sets: `development` was used while the detectors were built;
 * `heldOut` was written with it but never used for tuning, and is scored apart. The values come
 * from @faker-js/faker, a library the detectors take nothing from.
 */

export interface SentenceSet {
  positives: string[];
  /** Sentences with look-alikes and nothing to find; `{}` takes a generated look-alike. */
  negatives: string[];
}

export type EvalSlug =
  | "email"
  | "phone"
  | "ssn"
  | "credit-card"
  | "ip-address"
  | "secrets"
  | "person-name"
  | "address";

export const development: Record<EvalSlug, SentenceSet> = {
  email: {
    positives: [
      "Please send the invoice to {} by Friday.",
      "You can reach me at {} if anything changes.",
      "Contact: {}",
      "My work address is {}, my personal one is private.",
      "Forwarding this thread to {} for review.",
      "Can you add {} to the mailing list?",
      "The login for the staging portal is {} and the usual password.",
      "reply-to: {}",
    ],
    negatives: [
      "Use the @{} handle on the forum, not email.",
      "The logo lives at assets/logo@2x.png in the repo.",
      "Clone it with git@github.com:acme/tools.git and run make.",
      "Mention {} in the changelog under the 2.4 release.",
      "The decorator @Component wraps the class.",
      "Meet me at 5@ the cafe on {}.",
    ],
  },
  phone: {
    positives: [
      "Call me on {} after six.",
      "My mobile number is {}.",
      "You can reach the front desk at {} during office hours.",
      "Phone: {}",
      "If the line drops, dial {} again.",
      "Text {} when you arrive at the gate.",
      "The emergency contact listed is {}.",
      "Leave a voicemail at {} and I will call back.",
      '{"name": "R. Diaz", "phone": "{}", "plan": "pro"}',
      "contact:\n  phone: {}\n  email: none",
      "2026-11-27T09:12:44Z INFO sms sent to {} (template=otp)",
    ],
    negatives: [
      "Order number {} shipped yesterday.",
      "The build {} passed all checks.",
      "Invoice INV-{} is overdue by 12 days.",
      "We upgraded to version {} last night.",
      "The meeting is on 2024-03-15 at 14:30 in room 204.",
      "Tracking ID {} is out for delivery.",
    ],
  },
  ssn: {
    positives: [
      "My SSN is {}.",
      "Social security number {} was entered twice.",
      "Please verify SSN: {} before payroll runs.",
      "The applicant's social security number is {}, per the form.",
      "SS# {}",
      "Employee tax id {} needs to be updated in the HR system.",
      '{"employee_id": 4411, "ssn": "{}"}',
      "curl -d 'ssn={}' https://hr.example.com/verify",
      "2026-11-27 WARN payroll: SSN {} failed validation",
    ],
    negatives: [
      "Reference code {} is on the shipping label.",
      "Part number {} is out of stock.",
      "The case was filed as {} in the county court.",
      "Use promo code {} for 10% off.",
      "Ticket {} was closed as a duplicate.",
    ],
  },
  "credit-card": {
    positives: [
      "Charge it to my card {}, expiry next March.",
      "Card number: {}",
      "I paid with {} but the order still says pending.",
      "The corporate card ending in the digits {} was declined.",
      "Please refund the amount to {}.",
      "Billing card on file: {}",
    ],
    negatives: [
      "The shipment weighs {} grams in total.",
      "Account reference {} is closed.",
      "Transaction {} was reconciled on Monday.",
      "The IMEI of the phone is {}.",
      "Our customer count reached {} this quarter.",
    ],
  },
  "ip-address": {
    positives: [
      "The server at {} stopped answering pings.",
      "Whitelist {} in the firewall, please.",
      "Requests are coming from {} in bursts.",
      "SSH into {} and restart nginx.",
      "Our VPN gateway is {}.",
      "Failed login from {} at 03:12.",
    ],
    negatives: [
      "We shipped version {} to production.",
      "See section {} of the contract for the terms.",
      "The package libfoo.so.{} is missing.",
      "Chrome/{} reports the error.",
      "The OID {} identifies the extension.",
    ],
  },
  secrets: {
    positives: [
      "Here is my API key: {}",
      "export OPENAI_API_KEY={}",
      "The token {} should still be valid for an hour.",
      "I accidentally committed {} to the repo, can you rotate it?",
      "Use {} in the Authorization header.",
      "config: api_key = {}",
      'curl -H "Authorization: Bearer {}" https://api.example.com/v1/models',
      "services:\n  worker:\n    environment:\n      API_KEY: {}",
      "2026-11-27 DEBUG retrying with token={}",
    ],
    negatives: [
      "The commit {} fixed the regression.",
      "Request id {} failed with a timeout.",
      "The checksum of the archive is {}.",
      "Set the key to {{ secrets.API_KEY }} in the workflow file.",
      "Use the placeholder {} in your .env.example file.",
    ],
  },
  "person-name": {
    positives: [
      "I had lunch with {} yesterday.",
      "Please forward this to {}.",
      "We are writing a birthday note for {} from the whole team.",
      "{} will join the call at three.",
      "Yesterday {} approved the budget for the new office.",
      "The report was reviewed by {} before it went out.",
      "Can you ask {} whether the contract is signed?",
      "Our new hire, {}, starts on Monday.",
      "According to {}, the shipment is delayed.",
      "The keynote speaker is {}.",
      "I spoke to {} about the delay and she agreed.",
      "Patient {} was admitted on Tuesday.",
      "Send the flowers to {} at the hospital.",
      "{} and I are planning the offsite.",
      "Tell {} that the deadline moved.",
      "The account belongs to {}, who opened it in 2019.",
      "Last week {} called twice about the refund.",
      "Hi {}, thanks for the quick reply.",
    ],
    negatives: [
      "The contract with {} was renewed for two years.",
      "We bought a {} for the office kitchen.",
      "Her title is {} in the new org chart.",
      "The branch in {} closes early on Fridays.",
      "We drove a {} across the country.",
      "The {} department is hiring.",
      "The song {} was playing in the lobby.",
      "Shipping to {} takes five days.",
      "The Grace Period ends on Friday.",
      "Jordan River Park is closed for repairs.",
      "We flew from Austin Texas to Paris France.",
      "Victoria Station was crowded this morning.",
      "The Adam Optimizer converged faster than plain SGD.",
      "George Washington University announced new scholarships.",
      "Summer Sale starts Monday across all stores.",
      "Major League Baseball released its schedule.",
      "The Royal Mail strike delayed the parcel.",
      "Apple Music and Google Cloud both raised prices.",
    ],
  },
  address: {
    positives: [
      "Ship the package to {}.",
      "My new address is {}.",
      "The office moved to {} last spring.",
      "Please send the signed copy to {} by courier.",
      "She lives at {} with her parents.",
      "Deliver to: {}",
      "The invoice lists {} as the billing address.",
      "Our warehouse is at {}, next to the rail yard.",
      "Meet me at {} at noon.",
      "Return address: {}",
      "I grew up at {} and still visit.",
      "The lease for {} ends in June.",
    ],
    negatives: [
      "The conference moved to {} this year.",
      "We ordered 24 {} for the new office.",
      "Version 12 Release Notes are online.",
      "Room 101 is on the 3rd floor.",
      "Apollo 13 Mission Control was recreated for the film.",
      "Top 10 Beach Resorts for families.",
      "Gate 23 opens at 9:40 for boarding.",
      "Section 230 of the act was debated again.",
      "Windows 11 Pro costs more than Home.",
      "I ran 5 miles on Sunday morning.",
      "The {} team won 3 games in a row.",
      "Chapter 11 protection was filed in {}.",
    ],
  },
};

export const heldOut: Record<EvalSlug, SentenceSet> = {
  email: {
    positives: [
      "If you need the slides, mail {} and mention the workshop.",
      "Account owner {} has not confirmed the change yet.",
      "cc {} on every reply, please",
    ],
    negatives: ["Tag the release v{} and push it.", "The style sheet uses @media print for the invoice."],
  },
  phone: {
    positives: ["Reach our support line on {} any weekday.", "His number changed, it is now {}.", "tel. {}"],
    negatives: ["Serial {} was recalled by the maker.", "The package arrived in {} pieces, sadly."],
  },
  ssn: {
    positives: ["For the loan form I gave my SSN {} over the phone.", "social security no. {}"],
    negatives: ["The firmware build {} bricked two units."],
  },
  "credit-card": {
    positives: ["Put the hotel on {} please.", "visa {} exp 04/29"],
    negatives: ["Batch {} was recalled after testing."],
  },
  "ip-address": {
    positives: ["The printer got the address {} from DHCP.", "Block traffic from {} for now."],
    negatives: ["Upgrade to release {} before Monday."],
  },
  secrets: {
    positives: ["Someone pasted {} into the public channel.", "password for the service account: {}"],
    negatives: ["The build hash {} is in the release notes."],
  },
  "person-name": {
    positives: [
      "My neighbour {} lent us a ladder.",
      "Could you book a table for {} at eight?",
      "The award went to {} this year.",
      "We just got a postcard from {} in Lisbon.",
      "In the meeting, {} argued for a smaller launch.",
      "Thanks to {} for covering my shift.",
    ],
    negatives: [
      "The firm {} filed its annual report.",
      "She ordered a {} online.",
      "Our office in {} has a new manager.",
      "The Elizabeth Line runs every five minutes.",
      "Hunter Green is the color of the new logo.",
      "Santa Clara County issued a new permit rule.",
    ],
  },
  address: {
    positives: [
      "Our new studio is at {}, come by.",
      "Mail the keys to {} before you leave.",
      "The accident happened outside {} around midnight.",
      "Registered office: {}",
    ],
    negatives: [
      "The festival returns to {} next summer.",
      "Flight 2207 to Boston boards at gate 4.",
      "We scored 3 goals in the first half.",
    ],
  },
};
