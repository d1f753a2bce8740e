import Foundation

// Decodes an `orders.batchget` answer in one pass over its bytes. JSONDecoder was most of storerecon's own time in a
// sync with amounts (`scripts/bench`). Like `VoidedPageFastDecoder` it accepts only what it is sure of: known keys
// at most once each, with strings without escapes, integers as plain digits and no nulls; keys it does not read are
// skipped after checking them as JSON, as JSONDecoder ignores them.
// For anything else it returns nil and the caller decodes with JSONDecoder, so values and errors stay JSONDecoder's.
enum OrdersFastDecoder {
    static func decode(_ data: Data) -> BatchGetOrdersResponse? {
        data.withUnsafeBytes { raw -> BatchGetOrdersResponse? in
            var reader = FastJSONReader(bytes: raw.bindMemory(to: UInt8.self))
            var response = BatchGetOrdersResponse(orders: nil)
            var seen: UInt32 = 0
            let parsed = reader.members { key, reader in
                guard key == "orders" else { return nil }
                guard first(1, &seen) else { return false }
                var orders: [PlayOrder] = []
                orders.reserveCapacity(PlayDeveloperClient.maxOrderIds)
                let read = reader.array { reader in
                    guard let order = reader.order() else { return false }
                    orders.append(order)
                    return true
                }
                response.orders = orders
                return read
            }
            return parsed && reader.atEnd() ? response : nil
        }
    }

    /// The byte ranges of the `orders` array's elements in an answer's body, as sent; nil for anything it is not
    /// sure of (a repeated `orders` key, a body that is not one JSON object).
    static func orderSpans(_ data: Data) -> [Range<Int>]? {
        data.withUnsafeBytes { raw -> [Range<Int>]? in
            var reader = FastJSONReader(bytes: raw.bindMemory(to: UInt8.self))
            var spans: [Range<Int>]?
            let parsed = reader.members { key, reader in
                guard key == "orders" else { return nil }
                guard spans == nil else { return false }
                var found: [Range<Int>] = []
                defer { spans = found }
                return reader.array { reader in
                    let start = reader.index
                    guard reader.skipValue() else { return false }
                    found.append(start..<reader.index)
                    return true
                }
            }
            return parsed && reader.atEnd() ? spans ?? [] : nil
        }
    }

    /// Marks `bit` seen; false when it was seen already (a repeated key).
    fileprivate static func first(_ bit: UInt32, _ seen: inout UInt32) -> Bool {
        guard seen & bit == 0 else { return false }
        seen |= bit
        return true
    }
}

extension FastJSONReader {
    /// An object's members: `read` reads the value of a key it knows and says whether it could, or returns nil for
    /// a key it does not know, whose value is then skipped.
    fileprivate mutating func members(_ read: (String, inout FastJSONReader) -> Bool?) -> Bool {
        object { key, reader in read(key, &reader) ?? reader.skipValue() }
    }

    /// A string member's value into `value`, once.
    fileprivate mutating func text(_ value: inout String?, _ bit: UInt32, _ seen: inout UInt32) -> Bool {
        guard OrdersFastDecoder.first(bit, &seen), let text = string() else { return false }
        value = text
        return true
    }

    fileprivate mutating func order() -> PlayOrder? {
        var order = PlayOrder(orderId: "")
        var id: String?
        var seen: UInt32 = 0
        let parsed = members { key, reader in
            switch key {
            case "orderId": return reader.text(&id, 1, &seen)
            case "purchaseToken": return reader.text(&order.purchaseToken, 2, &seen)
            case "state": return reader.text(&order.state, 4, &seen)
            case "createTime": return reader.text(&order.createTime, 8, &seen)
            case "buyerAddress":
                var country: String?
                var inner: UInt32 = 0
                guard OrdersFastDecoder.first(16, &seen) else { return false }
                order.buyerAddress = PlayOrder.BuyerAddress()
                defer { order.buyerAddress?.buyerCountry = country }
                return reader.members { key, reader in
                    key == "buyerCountry" ? reader.text(&country, 1, &inner) : nil
                }
            case "total": return reader.money(&order.total, 32, &seen)
            case "tax": return reader.money(&order.tax, 64, &seen)
            case "developerRevenueInBuyerCurrency":
                return reader.money(&order.developerRevenueInBuyerCurrency, 128, &seen)
            case "lineItems":
                guard OrdersFastDecoder.first(256, &seen) else { return false }
                var items: [PlayOrder.LineItem] = []
                defer { order.lineItems = items }
                return reader.array { reader in
                    guard let item = reader.lineItem() else { return false }
                    items.append(item)
                    return true
                }
            case "orderHistory":
                guard OrdersFastDecoder.first(512, &seen), let history = reader.history() else { return false }
                order.orderHistory = history
                return true
            default: return nil
            }
        }
        guard parsed, let id else { return nil }
        order.orderId = id
        return order
    }

    /// A `Money` object, checked as ``PlayMoney``'s decoder checks it.
    fileprivate mutating func money(_ value: inout PlayMoney?, _ bit: UInt32, _ seen: inout UInt32) -> Bool {
        guard OrdersFastDecoder.first(bit, &seen) else { return false }
        var currency: String?
        var units: Int64?
        var nanos: Int64?
        var inner: UInt32 = 0
        let parsed = members { key, reader in
            switch key {
            case "currencyCode": return reader.text(&currency, 1, &inner)
            case "units":
                guard OrdersFastDecoder.first(2, &inner) else { return false }
                units = reader.flexibleInteger()
                return units != nil
            case "nanos":
                guard OrdersFastDecoder.first(4, &inner) else { return false }
                nanos = reader.integer()
                return nanos != nil
            default: return nil
            }
        }
        let whole = units ?? 0
        guard parsed, let part = Int32(exactly: nanos ?? 0), (-999_999_999...999_999_999).contains(part),
            whole == 0 || part == 0 || (whole > 0) == (part > 0)
        else { return false }
        value = PlayMoney(currencyCode: currency, units: whole, nanos: part)
        return true
    }

    fileprivate mutating func lineItem() -> PlayOrder.LineItem? {
        var item = PlayOrder.LineItem()
        var seen: UInt32 = 0
        let parsed = members { key, reader in
            switch key {
            case "productId": return reader.text(&item.productId, 1, &seen)
            case "listingPrice": return reader.money(&item.listingPrice, 2, &seen)
            case "total": return reader.money(&item.total, 4, &seen)
            case "tax": return reader.money(&item.tax, 8, &seen)
            case "oneTimePurchaseDetails":
                guard OrdersFastDecoder.first(16, &seen) else { return false }
                var quantity: Int64?
                var inner: UInt32 = 0
                let read = reader.members { key, reader in
                    guard key == "quantity" else { return nil }
                    guard OrdersFastDecoder.first(1, &inner) else { return false }
                    quantity = reader.integer()
                    return quantity != nil
                }
                guard read else { return false }
                item.oneTimePurchaseDetails = PlayOrder.OneTimePurchaseDetails(
                    quantity: quantity.flatMap { Int(exactly: $0) })
                return true
            case "subscriptionDetails":
                guard OrdersFastDecoder.first(32, &seen) else { return false }
                var details = PlayOrder.SubscriptionDetails()
                var inner: UInt32 = 0
                defer { item.subscriptionDetails = details }
                return reader.members { key, reader in
                    switch key {
                    case "basePlanId": return reader.text(&details.basePlanId, 1, &inner)
                    case "servicePeriodStartTime": return reader.text(&details.servicePeriodStartTime, 2, &inner)
                    case "servicePeriodEndTime": return reader.text(&details.servicePeriodEndTime, 4, &inner)
                    default: return nil
                    }
                }
            default: return nil
            }
        }
        return parsed ? item : nil
    }

    fileprivate mutating func history() -> PlayOrder.OrderHistory? {
        var history = PlayOrder.OrderHistory()
        var seen: UInt32 = 0
        let parsed = members { key, reader in
            switch key {
            case "refundEvent":
                guard OrdersFastDecoder.first(1, &seen) else { return false }
                var event = PlayOrder.RefundEvent()
                var inner: UInt32 = 0
                defer { history.refundEvent = event }
                return reader.members { key, reader in
                    switch key {
                    case "eventTime": return reader.text(&event.eventTime, 1, &inner)
                    case "refundReason": return reader.text(&event.refundReason, 2, &inner)
                    case "refundDetails": return reader.refundDetails(&event.refundDetails, 4, &inner)
                    default: return nil
                    }
                }
            case "partialRefundEvents":
                guard OrdersFastDecoder.first(2, &seen) else { return false }
                var events: [PlayOrder.PartialRefundEvent] = []
                defer { history.partialRefundEvents = events }
                return reader.array { reader in
                    var event = PlayOrder.PartialRefundEvent()
                    var inner: UInt32 = 0
                    let read = reader.members { key, reader in
                        switch key {
                        case "createTime": return reader.text(&event.createTime, 1, &inner)
                        case "processTime": return reader.text(&event.processTime, 2, &inner)
                        case "state": return reader.text(&event.state, 4, &inner)
                        case "refundDetails": return reader.refundDetails(&event.refundDetails, 8, &inner)
                        default: return nil
                        }
                    }
                    events.append(event)
                    return read
                }
            default: return nil
            }
        }
        return parsed ? history : nil
    }

    fileprivate mutating func refundDetails(
        _ value: inout PlayOrder.RefundDetails?, _ bit: UInt32, _ seen: inout UInt32
    ) -> Bool {
        guard OrdersFastDecoder.first(bit, &seen) else { return false }
        var details = PlayOrder.RefundDetails()
        var inner: UInt32 = 0
        let parsed = members { key, reader in
            switch key {
            case "total": return reader.money(&details.total, 1, &inner)
            case "tax": return reader.money(&details.tax, 2, &inner)
            default: return nil
            }
        }
        value = details
        return parsed
    }
}
