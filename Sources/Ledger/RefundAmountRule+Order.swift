import PlayDeveloperAPI

/// What an Orders API answer gives one revoked row, by ``RefundAmountRule``: the store's amount when the order states
/// one, else the configured estimate in the sale's currency (the product's only price when the order states no
/// currency), else none with a note. Both ways of pricing a row write it: after the row is stored
/// (``RefundWriter/savePartAmounts(_:on:)``) and ahead of it (``RefundRecord/take(_:of:)``).
extension RefundAmountRule {
    struct OrderAmount: Equatable {
        var offer: Offer
        var gross: Int64?
        var tax: Int64?
        var precision: Int?
        var source: AmountSource?
        var note: AmountNote?
        var currency: String?
        /// The configured unit price of an estimate.
        var unit: Int64?

        init(_ price: GoogleOrderPricing.PartPrice, productId: String?, prices: ConfiguredPrices) {
            offer = RefundAmountRule.offer(of: price)
            (note, currency) = (price.note, price.currency)
            switch offer {
            case .stated:
                (gross, tax, precision, source) = (price.gross, price.tax, 9, .store)
            case .estimate:
                if let estimate = prices.estimate(of: productId, in: price.currency) {
                    (gross, precision, source) = (
                        estimate.milli * Int64(price.quantity), estimatePrecision, .configured
                    )
                    (currency, unit) = (estimate.currency, estimate.milli)
                } else if price.note == nil || price.note == .noRefundEvent, prices.milli[productId ?? ""] != nil {
                    note = .noConfiguredPrice
                }
            case .overRefunded, .voidedRow:
                break
            }
        }
    }
}

extension RefundRecord {
    /// Takes the store's amount of a part of `order`, as the rule writes it on a stored row; an answer that states
    /// no amount leaves the record as it is.
    mutating func take(_ price: GoogleOrderPricing.PartPrice, of order: PlayOrder) {
        let productId = order.lineItems?.first?.productId
        let offered = RefundAmountRule.OrderAmount(price, productId: productId, prices: ConfiguredPrices())
        guard offered.source == .store, let gross = offered.gross, let precision = offered.precision else { return }
        amount = .stated(gross: gross, tax: offered.tax, precision: precision)
        currency = offered.currency ?? currency
        quantity = price.quantity
        buyerCountry = order.buyerAddress?.buyerCountry ?? buyerCountry
        self.productId = self.productId ?? productId
        refundReason = order.orderHistory?.refundEvent?.refundReason
        priceMilli = offered.unit
    }
}
