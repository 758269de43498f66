"""Online protocols on shares: each module holds one protocol family and cites its source."""
